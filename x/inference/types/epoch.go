package types

// InPocPhase reports whether the block at height is in the PoC phase of
// epoch, when only poc_available members serve.
func (p Params) InPocPhase(epoch Epoch, height int64) bool {
	return height < epoch.StartHeight+int64(p.PocPhaseBlocks)
}

// NextEpochHeight is the height at which the epoch after epoch starts.
func (p Params) NextEpochHeight(epoch Epoch) int64 {
	return epoch.StartHeight + int64(p.EpochLength)
}

// PruneHeight is when an inference closed at endHeight is deleted: kept
// inference_retention_epochs x epoch_length blocks after the block that
// closed it.
func (p Params) PruneHeight(endHeight int64) int64 {
	return endHeight + p.RetentionBlocks()
}
