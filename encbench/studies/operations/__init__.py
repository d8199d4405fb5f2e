"""The operations study: what encryption at rest costs a DBA outside steady load — start-up,
crash recovery, encrypting existing data, backup and prepare — each timed, paired plain
against encrypted in the engine's rounds."""
