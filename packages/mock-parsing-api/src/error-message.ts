/** The message of whatever was thrown: a library may reject with a string as well as an Error. */
export function errorMessage(caught: unknown): string {
  return caught instanceof Error ? caught.message : String(caught);
}
