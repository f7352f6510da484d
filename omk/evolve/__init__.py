"""`omk evolve`: an improvement loop for a skill that guards against the two ways such a loop
fools itself, accepting noise because many candidates were tried and overfitting the samples the
improver saw.

- `splits`: the seeded, stratified train / selection / test split of the samples;
- `candidates`: the checks that refuse a candidate SKILL.md before anything is paid for;
- `acceptance`: whether a candidate beats the current best on the selection split, corrected for
  every candidate the whole run may try;
- `leakage`: the guard that keeps selection and test text out of every improver request.

Nothing here imports the CLI.
"""
