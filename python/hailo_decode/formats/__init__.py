"""HailoRT output forms as pure array functions (no Detections): each module one form."""
