// What the user service and authentication need from storage (one implementation per backend).
import type { Account, UserType } from "./model";

export interface UserRow extends Account {
  passwordHash: string;
}

export interface NewUser {
  username: string;
  key: string;
  passwordHash: string;
  userType: UserType;
  money: number;
  at: number;
}

export interface UserStore {
  findByKey(key: string): Promise<UserRow | undefined>;
  findById(id: number): Promise<Account | undefined>;
  /** Inserts the user and its opening ledger row in one transaction; undefined when the username is taken. */
  insert(u: NewUser): Promise<Account | undefined>;
  count(): Promise<number>;
}
