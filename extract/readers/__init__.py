"""The ways of reading a table, behind one protocol (extract/lifecycle/reader.py); they keep no state."""
