/** A true/false setting from the environment: unset or empty is false; anything else is a start error. */
export function envFlag(env: NodeJS.ProcessEnv, name: string): boolean {
  const value = (env[name] ?? '').trim().toLowerCase();
  if (value === '' || value === 'false') return false;
  if (value === 'true') return true;
  throw new Error(`${name} must be true or false, got ${env[name]}`);
}
