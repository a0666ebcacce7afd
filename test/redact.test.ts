import { describe, expect, it } from 'vitest';
import { redactSecrets } from '../engine/redact.ts';

describe('redactSecrets', () => {
  it('hides the password of each URL in a text, the user name and host kept', () => {
    expect(redactSecrets('url=postgres://app:s3cret@db.internal:5432/jobs level=info')).toBe('url=postgres://app:***@db.internal:5432/jobs level=info');
    expect(redactSecrets('a postgres://a:x@h1/d and postgresql://b:y@h2/d')).toBe('a postgres://a:***@h1/d and postgresql://b:***@h2/d');
  });

  it('hides a password holding an unencoded @ or / whole, up to its last @', () => {
    expect(redactSecrets('postgres://u:p@ss@host/db')).toBe('postgres://u:***@host/db');
    expect(redactSecrets('postgres://u:p@ss/w0rd@127.0.0.1:5432/db')).toBe('postgres://u:***@127.0.0.1:5432/db');
  });

  it('keeps the host of a URL whose query holds an @', () => {
    expect(redactSecrets('postgres://u:pw@db.internal/jobs?application_name=svc@host')).toBe('postgres://u:***@db.internal/jobs?application_name=svc@host');
  });

  it('leaves a URL without a password alone', () => {
    for (const text of ['postgres://app@host/db', 'postgres:///db?host=/run/postgresql', 'see https://example.com/a:b']) expect(redactSecrets(text)).toBe(text);
  });
});
