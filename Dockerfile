# One image for web and workers. GPU workers run the same image on a host with the NVIDIA
# container toolkit; torch uses CUDA when the device is visible (set TORCH_SPEC to a CUDA build).
FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
WORKDIR /app
COPY requirements.txt .
RUN pip install --no-cache-dir -r requirements.txt
COPY . .
RUN SECRET_KEY=build-only python manage.py collectstatic --noinput
EXPOSE 8000
CMD ["gunicorn", "alignapp.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "3"]
