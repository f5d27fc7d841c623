// Who acted, as the records keep it: a person (their user id, name and e-mail) or an API key (its id
// and name). A session's `keyId` is the session's `ses_` id, which no record should keep: a person's
// acts are theirs across sessions, so every feature takes its actor from here, never from `keyId`.
import type { Auth } from "./model";

export interface Actor {
  type: "user" | "key";
  /** `usr_…` for a person, the key's id for a key. */
  id: string;
  /** The person's name, or the key's name (null when the key has none). */
  name: string | null;
  /** The person's e-mail; null for a key. */
  email: string | null;
}

export function actorOf(auth: Pick<Auth, "keyId" | "keyName" | "person">): Actor {
  const p = auth.person;
  return p ? { type: "user", id: p.userId, name: p.name, email: p.email } : { type: "key", id: auth.keyId, name: auth.keyName, email: null };
}

/**
 * The one string the wire shapes that keep a string (`decision.by`) carry: a person's e-mail, a key's
 * name (its id when it has none).
 */
export function byText(a: Actor): string {
  return a.type === "user" ? (a.email ?? a.id) : (a.name ?? a.id);
}

/** The actor a stored `(by, byId)` pair names: ids of people start with `usr_`, anything else is a key. */
export function storedActor(by: string | null, byId: string | null): { type: "user" | "key"; id: string; name: string } | null {
  if (by === null) return null;
  const id = byId ?? by;
  return { type: id.startsWith("usr_") ? "user" : "key", id, name: by };
}
