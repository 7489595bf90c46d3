"""The SQLite plumbing every state file shares: opening with a durability mode, idempotent
migrations, transactions and the one clock their rows are stamped with."""
