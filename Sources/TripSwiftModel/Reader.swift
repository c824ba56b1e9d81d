import SwiftSyntax
import SwiftParser
enum Placeholder {}
