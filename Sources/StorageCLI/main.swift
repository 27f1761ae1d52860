import Foundation
import StorageCommandLine

exit(StorageTool.run(Array(CommandLine.arguments.dropFirst())))
