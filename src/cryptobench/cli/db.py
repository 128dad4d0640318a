"""`cryptobench db migrate [--db DB]`: bring a result store up to this cryptobench's version.

A SQLite file is brought up to date whenever it is opened (one user, one file). A PostgreSQL
store is shared: each machine's cryptobench refuses a store older than itself until someone runs
this once, in one transaction, so that no machine changes the schema under the others."""
from __future__ import annotations

import sys

from ..core.errors import UsageError
from ..core.printable import printable
from ..store.database import STORE_VERSION, Store, store_location
from .commands import COMMANDS
from .common import OneLineParser, add_db

NAME = "db"
HELP = COMMANDS[NAME].help


def add_parser(sub) -> None:
    db = sub.add_parser("db", help=HELP)
    dsub = db.add_subparsers(dest="db_command", parser_class=OneLineParser)
    m = dsub.add_parser("migrate", help="bring the store up to this cryptobench's version (a shared PostgreSQL "
                                        "store needs it once after an upgrade; a SQLite file is migrated as it opens)")
    add_db(m)


def run(args, out) -> int:
    if args.db_command != "migrate":
        raise UsageError("db: expected a subcommand: migrate")
    location = store_location(args.db)
    # a missing SQLite file is a typo, not a store to make; an empty PostgreSQL database is set up
    store = Store(location, migrate=True, create=location.kind == "postgresql")
    try:
        if store.migrated_from is None:
            out.write(f"{printable(store.label)}: store version {STORE_VERSION}, up to date\n")
        else:
            out.write(f"{printable(store.label)}: migrated from store version {store.migrated_from} to {STORE_VERSION}\n")
    finally:
        store.close()
    sys.stdout.flush()
    return 0
