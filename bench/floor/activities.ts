/** The floor's one activity (bench/floor/workflows.ts): returns at once. */
export async function work(): Promise<void> {}
