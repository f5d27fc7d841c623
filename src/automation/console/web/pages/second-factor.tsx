// The person's second factor (TOTP, RFC 6238): its state, enrolling one (the secret and its otpauth://
// address for the authenticator app, then a current code to confirm), and removing it with a code.
// Shown on My sessions, and as the only page while the tenant requires a factor the person has not set.
import { useState } from "preact/hooks";
import { TextField } from "../components/field";
import { FilterForm } from "../components/filters";
import { ShownOnce } from "../components/once";
import { Notice, Outcome, Page, Problem, useAction, useLoad, useSession } from "../ui";

export function SecondFactor({ onConfirmed }: { onConfirmed?: () => void }) {
  const { client } = useSession();
  const status = useLoad(() => client.sessions.secondFactor(), []);
  const [enrolled, setEnrolled] = useState<{ secret: string; uri: string } | null>(null);
  const [code, setCode] = useState("");
  const action = useAction();
  const s = status.data;

  const confirm = () =>
    action.run(async () => {
      await client.sessions.confirmSecondFactor(code.replace(/\s/g, ""));
      setEnrolled(null);
      setCode("");
      status.reload();
      onConfirmed?.();
      return "Second factor on: sign-in now asks for a code.";
    });

  return (
    <section aria-labelledby="totp-h">
      <h2 id="totp-h">Second factor</h2>
      <Problem error={status.error} />
      {s ? (
        <p data-testid="totp-state">
          {s.enabled ? "On: sign-in asks for a code from your authenticator app." : "Off: sign-in asks for the password only."}
          {s.required ? " This tenant requires one." : ""}
        </p>
      ) : null}
      {s && !s.enabled && !enrolled ? (
        <button type="button" disabled={action.busy} onClick={() => void action.run(async () => setEnrolled(await client.sessions.enrollSecondFactor()))}>
          Set up a second factor
        </button>
      ) : null}
      {enrolled ? (
        <>
          <ShownOnce label="Secret for your authenticator app" value={enrolled.secret} note="Type it into your authenticator app (time-based, 6 digits, 30 s), or open the address below on a phone that has one. Then confirm with the code the app shows." />
          <ShownOnce label="otpauth address" value={enrolled.uri} note="The same secret as an address authenticator apps understand." />
          <FilterForm
            label="Confirm the second factor"
            onApply={() => void confirm()}
            buttons={
              <button type="submit" disabled={action.busy}>
                Confirm
              </button>
            }
          >
            <TextField label="Code from the app" id="totp-confirm" value={code} onValue={setCode} required pattern="[0-9 ]{6,8}" />
          </FilterForm>
        </>
      ) : null}
      {s && s.enabled && !s.required ? (
        <FilterForm
          label="Remove the second factor"
          onApply={() =>
            void action.run(async () => {
              await client.sessions.removeSecondFactor(code.replace(/\s/g, ""));
              setCode("");
              status.reload();
              return "Second factor removed.";
            })
          }
          buttons={
            <button type="submit" class="danger" disabled={action.busy}>
              Remove
            </button>
          }
        >
          <TextField label="Current code (to remove it)" id="totp-remove" value={code} onValue={setCode} required pattern="[0-9 ]{6,8}" />
        </FilterForm>
      ) : null}
      <Outcome action={action} />
    </section>
  );
}

/** The only page of a session held at enrollment: set up the factor, then the console reloads. */
export function EnrollRequired() {
  return (
    <Page title="Set up a second factor">
      <Notice>This tenant requires a second factor (a code from an authenticator app) before anything else. Set it up here; the console opens once it is confirmed.</Notice>
      <SecondFactor onConfirmed={() => location.reload()} />
    </Page>
  );
}
