// Entry of the console bundle (index.html's only script).
import { render } from "preact";
import { App } from "./app";

const root = document.getElementById("app")!;
root.textContent = ""; // the static "Loading…" line
render(<App />, root);
