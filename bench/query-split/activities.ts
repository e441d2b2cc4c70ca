export async function step(): Promise<void> {}
