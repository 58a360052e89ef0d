from .aggregates import KeptAggregate
from .alignment import (
    MINING_METHOD,
    AlignmentRun,
    CandidatePair,
    ModelVersion,
    PairSentence,
    ParagraphAlignment,
    ParagraphProposal,
    Prediction,
    RunChunk,
    RunComparison,
    Side,
    indices_key,
    key_indices,
)
from .audit import AuditEvent
from .corpus import Article, Document, Paragraph, Sentence
from .exports import Export, PreviewAnswer, PreviewPart, SplitChange
from .jobs import TRAIN_JOB, Job, Status
from .labels import (
    Adjudication,
    AdjudicationChange,
    ArticleCompletion,
    Assignment,
    Label,
    LabelChange,
    QueueFrontier,
    Split,
)
from .projects import LabelScheme, Membership, Project, Role

__all__ = [
    "MINING_METHOD", "TRAIN_JOB", "Adjudication", "AdjudicationChange", "AlignmentRun", "ArticleCompletion", "AuditEvent", "LabelChange",
    "ParagraphProposal", "PreviewAnswer", "PreviewPart", "RunComparison",
    "Prediction", "QueueFrontier", "Article", "Assignment", "CandidatePair", "Document", "Export", "Job", "KeptAggregate", "Label",
    "LabelScheme", "Membership", "ModelVersion", "PairSentence", "Paragraph", "ParagraphAlignment", "Project",
    "Role", "RunChunk", "Sentence", "Side", "Split", "SplitChange", "Status", "indices_key",
    "key_indices",
]
