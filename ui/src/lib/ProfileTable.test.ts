import { render, screen } from '@testing-library/svelte';
import { describe, expect, it } from 'vitest';
import type { ProfileView } from '../bindings';
import ProfileTable from './ProfileTable.svelte';

const base: ProfileView = {
  id: 'p_1', connection_id: 'c_1', label: 'primary', weight: 3, priority: 0, enabled: true, primary: true,
  credential: 'present', credential_revision: 1, revision: 1, created_at: '', updated_at: '',
};

describe('ProfileTable', () => {
  it('lists each profile with its share and marks the primary', () => {
    render(ProfileTable, { profiles: [base, { ...base, id: 'p_2', label: 'backup', weight: 1, primary: false, credential: 'missing' }] });
    const rows = screen.getAllByTestId('profile');
    expect(rows).toHaveLength(2);
    expect(rows[0].textContent).toContain('75%');
    expect(rows[0].textContent).toContain('primary');
    expect(rows[1].textContent).toContain('missing');
  });

  it('guides the user when there are no profiles', () => {
    render(ProfileTable, { profiles: [] });
    expect(screen.getByText(/switchyard profile add/)).toBeTruthy();
  });
});
