// VFXFilters
