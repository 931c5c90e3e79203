package main

// TODO(helpers): each stub moves to its own file when implemented.
