"""The code of torch.nn.functional, which eagergrad.nn.functional re-exports: one module
per family of torch's documentation (convolution, pooling, attention, activation,
normalization, linear, dropout, sparse, distance, loss, vision), rnn.py for the recurrent
computations behind nn.RNN/LSTM/GRU (no public function), _utils.py for the helpers several
families share."""
