"""``azureml.core.run.Run`` as the SDK gives it outside Azure: an offline run whose metrics are printed."""


class Run:
    @classmethod
    def get_context(cls):
        return cls()

    get_submitted_run = get_context

    def log(self, name, value, description=""):
        print(f"[offline run] {name}: {value}")
