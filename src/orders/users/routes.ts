import { Elysia } from "elysia";
import type { AuthService } from "../auth/service";
import type { UserService } from "./service";

export const userRoutes = (auth: AuthService, users: UserService) =>
  new Elysia({ name: "orders.users" })
    .post("/users", async ({ body, set }) => {
      const user = await users.register(body);
      set.status = 201;
      set.headers.location = `/users/${user.id}`;
      return user;
    })
    .get("/authenticated", ({ request }) => users.me(auth.authenticate(request.headers.get("authorization"))));
