"""What a suite is made of: samples, their assertions and turns, layers and statuses (model).
Below the records, which name a result's layer and status with these values."""
