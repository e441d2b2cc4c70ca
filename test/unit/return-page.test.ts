import { resultPage } from '../../api/routes/return';

describe('payer return page', () => {
  it('refreshes, by GET, to the signed address of the session it shows (relative: works under a path prefix)', () => {
    expect(resultPage('processing', { sessionId: 'ps_123', token: 'a-b_c' })).toContain(
      '<meta http-equiv="refresh" content="5; url=ps_123?t=a-b_c">',
    );
  });
  it('does not refresh a final page, and escapes what it shows', () => {
    const html = resultPage('success', { sessionId: 'ps_<b>', token: 't' });
    expect(html).not.toContain('http-equiv="refresh"');
    expect(html).toContain('ps_&lt;b&gt;');
  });
  it('a 404 page names no session', () => {
    const html = resultPage('not_found');
    expect(html).toContain('data-outcome="not_found"');
    expect(html).not.toContain('session-id');
  });
});
