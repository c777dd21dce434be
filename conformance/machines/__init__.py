"""Stateful Hypothesis machines that drive a backend and the model together.

- :class:`~.single_device.SingleDeviceMachine`: one device, several streams,
  events, gates, pinned / pageable / registered buffers, host mutation inside
  pending windows, valid and invalid copies, syncs, observations.
- :class:`~.multi_device.MultiDeviceMachine`: two devices, switching, each
  device's own instance, another device's stream.
- :class:`~.threads.ThreadsMachine`: several host threads, each on its own
  stream and variables, copying at once.

Return codes are compared at every step (the harness); device bytes at every
observation.  Each copy carries a byte pattern no other copy has, so a
diagnosis names the copy whose bytes it saw.

May import: reference_impl, adapters, conformance.harness, conformance.authoring,
conformance.session.
"""
