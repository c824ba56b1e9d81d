/* Nothing: SwiftPM builds a C target from at least one source file. The module is its headers. */
