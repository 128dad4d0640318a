"""The result database: runs, cells and leases in SQLite or PostgreSQL (database.py, backends.py),
and where the store is (location.py)."""
