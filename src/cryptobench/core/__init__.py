"""The lowest layer, which every other imports: errors, files, child processes, the typed records
(Plan, Cell, Result, Run, McuTargetSpec), quantities and units, printable text, and the table
model every table is built on. It imports nothing of the package above it."""
