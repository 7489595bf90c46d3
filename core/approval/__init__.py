"""Approvals: the gate and its ladder of levels, what a host can answer, what a yes is bound
to, session grants, the durable approval and question records, and the audit log."""
