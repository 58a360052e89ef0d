from .alignment import AlignmentRun, CandidatePair, ModelVersion, PairSentence, ParagraphAlignment, Side, indices_key
from .corpus import Article, Document, Paragraph, Sentence
from .jobs import Job, Status
from .labels import Adjudication, Assignment, Label, Split
from .projects import LabelScheme, Membership, Project, Role

__all__ = [
    "Adjudication", "AlignmentRun", "Article", "Assignment", "CandidatePair", "Document", "Job", "Label",
    "LabelScheme", "Membership", "ModelVersion", "PairSentence", "Paragraph", "ParagraphAlignment", "Project",
    "Role", "Sentence", "Side", "Split", "Status", "indices_key",
]
