-- A journal entry of a secret being written names its writer and a lease, so start-up
-- clean-up in another process can tell "written, not yet committed" from "orphaned": it
-- leaves an entry alone while its writer's process lives and the lease has not run out.
-- Entries without a writer (old secrets to delete, entries from before) are orphans as before.
ALTER TABLE secret_journal ADD COLUMN owner_pid INTEGER;
ALTER TABLE secret_journal ADD COLUMN lease_until INTEGER;
