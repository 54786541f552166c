"""Dataset exports of run directories: COCO instance segmentation and YOLO labels."""
