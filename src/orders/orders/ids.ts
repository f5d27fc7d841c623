import { Invalid } from "../../kernel/errors";

/**
 * A path id. Any integer is an id (0 and negatives included: they name no order, so the lookup answers
 * 404, or 403 for another user's list, as the original service's `Long` path variables did); text that
 * is not an integer, or too long to be one, is a 400 naming the parameter.
 */
export function pathId(raw: string, field = "id"): number {
  if (!/^-?\d{1,15}$/.test(raw)) throw Invalid(`${field} must be an integer (got "${raw}")`, { field });
  return Number(raw);
}
