"""The scoring kinds' jobs: each registered scoring kind (``annotation/services/scoring/kinds/``) adds its
job kind when it registers; this module loads them with the other job kinds."""
from annotation.services.scoring import kinds

kinds.load()
