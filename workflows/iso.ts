/** Workflow time (epoch ms) as the ISO 8601 text every view and record shows. */
export const iso = (ms: number): string => new Date(ms).toISOString();
