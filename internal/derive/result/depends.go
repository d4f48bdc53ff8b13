package result

// What a result may depend on besides the file and the settings
// (FileResult.DependsOn), part of the JSON schema.
const (
	DependsClock   = "clock"   // a liveness verdict compared the last record's time with now
	DependsLineage = "lineage" // the file continues other rollouts (history_base)
)
