import { resultPage } from '../../api/routes/return';

describe('payer return page', () => {
  it('refreshes to the session it shows, so a refresh after a POST to the bare /return still finds it', () => {
    expect(resultPage('processing', 'ps_123')).toContain(
      '<meta http-equiv="refresh" content="5; url=/return/ps_123">',
    );
  });
  it('does not refresh a final page, and escapes what it shows', () => {
    const html = resultPage('success', 'ps_<b>');
    expect(html).not.toContain('http-equiv="refresh"');
    expect(html).toContain('ps_&lt;b&gt;');
  });
});
