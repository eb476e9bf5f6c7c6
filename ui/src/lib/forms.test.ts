import { describe, expect, it } from 'vitest';
import { cleanSecret, formFromConnection, headerLines, splitLines, splitList, toInt } from './forms';
import type { ConnectionView } from './types';

describe('form text', () => {
  it('splits lists on commas and lines, dropping blanks', () => {
    expect(splitList(' a, b\n\nc ,')).toEqual(['a', 'b', 'c']);
    expect(splitLines('x=y\n  \n z=w ')).toEqual(['x=y', 'z=w']);
  });

  it('turns header rows into Name: value lines, skipping unnamed rows', () => {
    expect(headerLines([{ name: ' X-A ', value: ' 1 ' }, { name: '', value: 'v' }])).toEqual(['X-A: 1']);
  });

  it('fills the edit form from a connection', () => {
    const c = {
      slug: 's', protocol: 'openai', base_url: 'https://h/v1', models: ['a', 'b'], mapping: [{ from: 'f', to: 't' }], headers: [{ name: 'x-a', value: '1' }],
    } as ConnectionView;
    expect(formFromConnection(c)).toEqual({ slug: 's', protocol: 'openai', baseUrl: 'https://h/v1', models: 'a, b', mappings: 'f=t', headers: [{ name: 'x-a', value: '1' }] });
  });

  it('drops whitespace a pasted key brings, and reads whole numbers', () => {
    expect(cleanSecret('  sk-abc\n')).toBe('sk-abc');
    expect(toInt('3')).toBe(3);
    expect(toInt('')).toBeNull();
    expect(toInt('2.5')).toBeNull();
    expect(toInt(4)).toBe(4);
  });
});
