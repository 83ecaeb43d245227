"""A stand-in for the Azure ML SDK's run context, as it is outside Azure (an offline run): only what the real
programs call (``Run.get_context()``, ``Run.get_submitted_run()``, ``run.log``)."""
