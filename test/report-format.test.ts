import { describe, expect, it } from 'vitest';
import { fmtDuration, fmtRateNumber } from '../reports/render/format.ts';

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

describe('fmtRateNumber', () => {
  it('shows a trickle below one job a second, and whole numbers from 10 up', () => {
    expect(fmtRateNumber(1 / 3)).toBe('0.33');
    expect(fmtRateNumber(0.04)).toBe('0.04');
    expect(fmtRateNumber(2.5)).toBe('2.5');
    expect(fmtRateNumber(9.96)).toBe('10');
    expect(fmtRateNumber(304.4)).toBe('304');
    expect(fmtRateNumber(0)).toBe('0');
  });
});
