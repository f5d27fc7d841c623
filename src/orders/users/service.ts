import type { Clock } from "../../kernel/clock";
import { Conflict, NotFound } from "../../kernel/errors";
import { rubles } from "../money";
import type { Account, Caller, RegisterInput, UserType, UserWire } from "./model";
import type { UserStore } from "./store";

/** Starting balances in kopecks. */
export const STARTING_MONEY: Record<UserType, number> = { Customer: 50_000, Performer: 30_000 };

/** The key that makes usernames unique and logins case-insensitive. */
export function usernameKey(username: string): string {
  return username.trim().normalize("NFC").toLowerCase();
}

export function userWire(u: Account): UserWire {
  return { id: u.id, username: u.username, userType: u.userType, type: u.userType, money: rubles(u.money) };
}

export class UserService {
  constructor(
    private readonly store: UserStore,
    private readonly clock: Clock,
    private readonly cost: { memoryCost: number; timeCost: number },
  ) {}

  async register(input: RegisterInput): Promise<UserWire> {
    const key = usernameKey(input.username);
    if (await this.store.findByKey(key)) throw Conflict(`Username "${input.username}" is already taken`, { field: "username" });
    const passwordHash = await this.hash(input.password);
    const user = await this.store.insert({
      username: input.username,
      key,
      passwordHash,
      userType: input.userType,
      money: STARTING_MONEY[input.userType],
      at: this.clock.now().getTime(),
    });
    if (!user) throw Conflict(`Username "${input.username}" is already taken`, { field: "username" });
    return userWire(user);
  }

  /** The caller with a fresh balance. */
  async me(caller: Caller): Promise<UserWire> {
    const account = await this.store.findById(caller.id);
    if (!account) throw NotFound(`User ${caller.id} not found`);
    return userWire(account);
  }

  hash(password: string): Promise<string> {
    return Bun.password.hash(password, { algorithm: "argon2id", ...this.cost });
  }
}

