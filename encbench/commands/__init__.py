"""What the CLI's commands do beyond running studies: the catalogue of profiles, `plan`,
`doctor`'s checks before a run, the report of a results directory, and `clean --target`."""
