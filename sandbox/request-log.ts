/**
 * What the partner asked the sandbox, call by call (`GET /sandbox/requests[?session_id=]`): the
 * endpoint, the project, the session it concerned, the answer's status and whether it was an
 * idempotent replay. Tests read it to show how many calls a flow took (one `init/checkout` for a
 * merchant-initiated payment). In memory only, the newest MAX_ENTRIES; never the request's body.
 */
export interface RequestLogEntry {
  seq: number;
  at: string;
  endpoint: string;
  project_id?: string;
  session_id?: string;
  http_status: number;
  /** Answered from the idempotency record, without doing anything again. */
  replayed?: boolean;
}

const MAX_ENTRIES = 20_000;

export class RequestLog {
  private readonly entries: RequestLogEntry[] = [];
  private seq = 0;

  add(entry: Omit<RequestLogEntry, 'seq' | 'at'>): void {
    this.entries.push({ seq: ++this.seq, at: new Date().toISOString(), ...entry });
    if (this.entries.length > MAX_ENTRIES) this.entries.splice(0, this.entries.length - MAX_ENTRIES);
  }

  list(sessionId?: string): RequestLogEntry[] {
    return this.entries
      .filter((e) => sessionId === undefined || e.session_id === sessionId)
      .map((e) => ({ ...e }));
  }
}
