import * as v from "valibot";

export const USER_TYPES = ["Customer", "Performer"] as const;
export type UserType = (typeof USER_TYPES)[number];

/** Letters, marks, numbers, punctuation, symbols and inner spaces; no control or invisible characters. */
const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]+$/u;

/** POST /users body. Messages name the field; the username is trimmed and NFC-normalised. */
export const RegisterBody = v.object({
  username: v.pipe(
    v.string("username must be a string"),
    v.transform((s) => s.trim().normalize("NFC")),
    v.check((s) => [...s].length >= 1, "username must not be empty"),
    v.check((s) => [...s].length <= 64, "username must be at most 64 characters"),
    v.regex(PRINTABLE, "username must not contain control or invisible characters"),
  ),
  password: v.pipe(
    v.string("password must be a string"),
    v.check((s) => [...s].length >= 4, "password must be at least 4 characters"),
    v.check((s) => [...s].length <= 128, "password must be at most 128 characters"),
  ),
  userType: v.picklist(USER_TYPES, 'userType must be "Customer" or "Performer"'),
});
export type RegisterInput = v.InferOutput<typeof RegisterBody>;

/** A user as the API returns it. `type` repeats `userType` for the original web client. */
export interface UserWire {
  id: number;
  username: string;
  userType: UserType;
  type: UserType;
  money: number;
}

/** The caller, as authentication resolves it: facts that never change for a user. */
export interface Caller {
  id: number;
  username: string;
  userType: UserType;
}

/** A user with its balance in kopecks. */
export interface Account extends Caller {
  money: number;
}
