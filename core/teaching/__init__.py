"""What the app asks and measures for a class: predict-then-reveal questions, compute-it-yourself
exercises, and induction heads found in a trained model."""
