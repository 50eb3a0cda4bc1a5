package store

import "context"

// ExecForTest runs a statement on the database of a SQL store.
func ExecForTest(s Store, q string) error {
	_, err := s.(*sqlStore).db.ExecContext(context.Background(), q)
	return err
}

// SchemaVersionForTest is the schema version of a SQL store.
func SchemaVersionForTest(s Store) (int, error) {
	return s.(*sqlStore).SchemaVersion(context.Background())
}
