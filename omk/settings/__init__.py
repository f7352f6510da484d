"""omk's settings, declared once (omk.settings.spec) and made into each face: `omk eval`'s flags
(omk.settings.flags), omk.yaml's check and the typed `Settings` (omk.settings.config), the Python API's
keywords (omk.api); the typed faces' fields are written from the spec by omk.settings.faces."""
