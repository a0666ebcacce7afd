import { describe, expect, it } from 'vitest';
import { fmtDuration } from '../reports/render/format.ts';

describe('fmtDuration', () => {
  it('rounds to the unit it shows, so no field reads 60', () => {
    expect(fmtDuration(999.6)).toBe('1.0 s');
    expect(fmtDuration(59_960)).toBe('1 min 00 s');
    expect(fmtDuration(3_599_600)).toBe('1 h 00 min');
    expect(fmtDuration(7_170_000)).toBe('2 h 00 min');
  });

  it('keeps the units of each range', () => {
    expect(fmtDuration(12)).toBe('12 ms');
    expect(fmtDuration(-1_500)).toBe('-1.5 s');
    expect(fmtDuration(125_000)).toBe('2 min 05 s');
    expect(fmtDuration(3_660_000)).toBe('1 h 01 min');
    expect(fmtDuration(null)).toBe('n/a');
  });
});
