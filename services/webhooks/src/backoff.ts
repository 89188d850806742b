/** Delay before the next attempt after `attempts` failed ones: base, then doubling. */
export const backoffSeconds = (baseSeconds: number, attempts: number): number =>
  baseSeconds * 2 ** (attempts - 1);
