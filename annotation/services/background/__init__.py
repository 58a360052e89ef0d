"""Background work shared by every area: starting jobs and reporting their progress/cancellation."""
