import { Elysia } from "elysia";
import { authGuard } from "../auth/guard";
import { limitedBody } from "../body";
import type { AuthService } from "../auth/service";
import { parseInput } from "../validate";
import { RegisterBody } from "./model";
import type { UserService } from "./service";

export const userRoutes = (auth: AuthService, users: UserService, bodyLimit: number) =>
  new Elysia({ name: "orders.users" })
    .use(authGuard(auth))
    .onParse(({ request, contentType }) => limitedBody(request, contentType, bodyLimit))
    .post("/users", async ({ body, set }) => {
      const user = await users.register(parseInput(RegisterBody, body));
      set.status = 201;
      set.headers.location = `/users/${user.id}`;
      return user;
    })
    .get("/authenticated", ({ caller }) => users.me(caller), { auth: true });
