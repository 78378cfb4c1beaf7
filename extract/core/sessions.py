"""What a session kept for the next user of its connection must forget: the settings, temporary
relations and session locks its last user left, which a new connection would not have. Several
statements without parameters: one round trip. Not `discard all`: it would also drop the statements a
driver prepared (psycopg would go on using them) and the role a connection set when it opened."""

FORGET_SESSION = "reset all; discard temp; select pg_advisory_unlock_all()"
